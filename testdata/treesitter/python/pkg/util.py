class Base:
    def start(self):
        pass


def helper(value):
    return value.strip()


def shadow(helper):
    return helper()
