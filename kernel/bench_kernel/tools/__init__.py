"""Tools: toolkits, the copy-on-write state they act on, and the environment that runs their calls."""
