import unittest

from pick import largest


class Hidden(unittest.TestCase):
    def test_largest(self):
        self.assertEqual(largest([3, 9, 4]), 9)
