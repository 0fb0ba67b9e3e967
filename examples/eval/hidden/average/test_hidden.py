import unittest

from stats import average


class Hidden(unittest.TestCase):
    def test_average(self):
        self.assertEqual(average([2, 4, 6]), 4)
