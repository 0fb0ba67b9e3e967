import unittest

from parity import is_even


class Hidden(unittest.TestCase):
    def test_even(self):
        self.assertEqual([is_even(n) for n in (0, 1, 2, 7)], [True, False, True, False])
