"""bench-banking-knowledge: tau2-bench's banking_knowledge domain for bench (in progress)."""
