"""Model access: backend interface, per-role configuration, the hub with cache, ledger and cost cap."""
