"""The machinery every benchmark shares: the run loop, executors, cost, output."""
