def initial(name):
    return name[1].upper()
