import unittest

from fizz import fizzbuzz


class Hidden(unittest.TestCase):
    def test_fizzbuzz(self):
        self.assertEqual([fizzbuzz(n) for n in (3, 5, 15, 7)], ['Fizz', 'Buzz', 'FizzBuzz', '7'])
