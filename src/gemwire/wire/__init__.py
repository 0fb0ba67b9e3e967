"""Layer 0: exact upstream wire types (msgspec Structs), named as upstream names them.

No logic and no I/O; each module pins the upstream version its types were taken from.
"""
