import unittest

from words import shout


class Hidden(unittest.TestCase):
    def test_shout(self):
        self.assertEqual(shout('hi'), 'HI!')
