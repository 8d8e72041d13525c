"""Python for bandit-node, standard library only.

- bandit_node.env: write an environment (a data owner's, an agent's program)
  that speaks the daemon's exec protocol, and test it without a daemon.
- bandit_node.client: the daemon's control API (/v0) over HTTP.
- bandit_node.sim: run `bandit-node simulate` and get its result as a dict.
"""

__version__ = "0.1.0"
