# A class's __init__ called 100 times through `Point(i)` (cmon's --py tests).
class Point:
    def __init__(self, x):
        self.x = x


def main():
    print(sum(Point(i).x for i in range(100)))


main()
