import unittest

from letters import count_vowels


class Hidden(unittest.TestCase):
    def test_vowels(self):
        self.assertEqual(count_vowels('Quiet Universe'), 7)
