from .core import Engine
from . import util
