"""The platform transactions (each platform module binds its class as ``TRANSACTION``)."""
