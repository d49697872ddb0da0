"""The Nornir side of ``bench_push.py``: runs in ``benchmarks/.venv-peers`` (nornir + nornir_netmiko).

Reads a job file (JSON: workers and per-host connection + steps), pushes with Nornir's threaded
runner and nornir_netmiko tasks, and prints one JSON line: wall time and failed hosts. Steps are
the same commands fabriccfg sends for the change itself: ``config`` blocks go through
``netmiko_send_config`` (then ``netmiko_save_config`` when ``save``), shell commands through
``netmiko_send_command``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import yaml
from nornir import InitNornir
from nornir.core.task import Result, Task
from nornir_netmiko.tasks import netmiko_save_config, netmiko_send_command, netmiko_send_config


def push(task: Task, steps: list[dict]) -> Result:
    for step in steps:
        if "config" in step:
            task.run(netmiko_send_config, config_commands=step["config"], enable=step.get("enable", True))
            if step.get("save"):
                task.run(netmiko_save_config)
        else:
            task.run(netmiko_send_command, command_string=step["command"],
                     read_timeout=step.get("timeout", 60))
    return Result(host=task.host, result="ok")


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text())
    steps = {h["name"]: h["steps"] for h in job["hosts"]}
    with tempfile.TemporaryDirectory() as tmp:
        hosts = {h["name"]: {"hostname": h["host"], "port": h["port"], "username": h["username"],
                             "password": h["password"], "platform": h["device_type"],
                             "connection_options": {"netmiko": {"extras": {"secret": h["password"]}}}}
                 for h in job["hosts"]}
        (Path(tmp) / "hosts.yaml").write_text(yaml.safe_dump(hosts))
        (Path(tmp) / "groups.yaml").write_text("{}\n")
        (Path(tmp) / "defaults.yaml").write_text("{}\n")
        t0 = time.perf_counter()
        files = {"host_file": f"{tmp}/hosts.yaml", "group_file": f"{tmp}/groups.yaml",
                 "defaults_file": f"{tmp}/defaults.yaml"}
        nr = InitNornir(runner={"plugin": "threaded", "options": {"num_workers": job["workers"]}},
                        inventory={"plugin": "SimpleInventory", "options": files},
                        logging={"enabled": False})
        result = nr.run(task=lambda t: push(t, steps[t.host.name]))
        nr.close_connections()
        wall = time.perf_counter() - t0
    failed = sorted(h for h, r in result.items() if r.failed)
    errors = {h: str(result[h].exception)[:200] for h in failed}
    print(json.dumps({"wall": wall, "failed": failed, "errors": errors}))


if __name__ == "__main__":
    main()
