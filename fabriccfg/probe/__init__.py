"""Active measurement of tail latency, jitter and bandwidth between GPU hosts (issue 15 §2)."""
