import os
from .util import helper, Base


class Engine(Base):
    def __init__(self, name):
        self.name = name
        self.setup()

    def setup(self):
        return helper(self.name)

    def run(self):
        self.setup()
        super().start()
        os.path.join("a", "b")
        return make()


def make():
    return Engine("x")
