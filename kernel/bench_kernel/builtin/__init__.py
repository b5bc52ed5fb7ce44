"""Built-in plugins, registered through the same hooks as a third party's (participants, identity channel, ...)."""
