def reverse_words(s):
    return ''.join(reversed(s.split()))
