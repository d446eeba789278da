"""Where generated code and its tests run: the jail, the runner and its verdict."""
