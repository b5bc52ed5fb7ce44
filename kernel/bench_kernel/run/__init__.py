"""Runs, by stage: `config` (what decides a run's results), `planning` (domain, tasks, arms, units, components
checked before anything is stored), `context` (what a run's conversations share), `playing` (one conversation set up,
played, evaluated and stored), `scoring` (metric values after a conversation) and `runner` (a run's whole course:
prepare, execute concurrently, heartbeat, signals, resume); `executors` and `runconfig` (run files and options)."""
