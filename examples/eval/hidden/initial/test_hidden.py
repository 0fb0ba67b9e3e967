import unittest

from names import initial


class Hidden(unittest.TestCase):
    def test_initial(self):
        self.assertEqual(initial('ada'), 'A')
