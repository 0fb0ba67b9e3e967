def shout(s):
    return s.lower() + '!'
