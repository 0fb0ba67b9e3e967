import unittest

from temperature import to_celsius


class Hidden(unittest.TestCase):
    def test_celsius(self):
        self.assertEqual([to_celsius(32), to_celsius(212)], [0, 100])
