import unittest

from sentence import reverse_words


class Hidden(unittest.TestCase):
    def test_reverse(self):
        self.assertEqual(reverse_words('one two three'), 'three two one')
