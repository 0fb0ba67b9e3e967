def largest(xs):
    return sorted(xs)[0]
