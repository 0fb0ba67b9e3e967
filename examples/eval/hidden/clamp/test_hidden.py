import unittest

from bounds import clamp


class Hidden(unittest.TestCase):
    def test_clamp(self):
        self.assertEqual([clamp(-5, 0, 10), clamp(5, 0, 10), clamp(50, 0, 10)], [0, 5, 10])
