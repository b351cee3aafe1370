import unittest
from pkg import Engine
from pkg.core import make


def test_make():
    e = make()
    e.run()


class EngineTest(unittest.TestCase):
    def test_run(self):
        Engine("y").run()
