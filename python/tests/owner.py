import random, sys
from bandit_node.env import Environment
env, log = Environment(), open(sys.argv[1], "a")
@env.pull
def pull(q):  # a SAMBA data owner: arm q.index, Bernoulli(0.8) or (0.3)
    r = int(random.random() < (0.8, 0.3)[q.index])
    print(q.index, q.step, r, file=log, flush=True)
    return r
env.run()
