#!/usr/bin/env python3
"""Example: probe a retra database from Python through the C ABI with ctypes.

Usage: probe.py LIBRETRA_SO DB_DIR [p0 ... p11]
Prints the value of an Awari position (default: the spec's 16-stone example)."""
import ctypes
import sys


def main() -> int:
    if len(sys.argv) not in (3, 15):
        print(__doc__, file=sys.stderr)
        return 2
    lib = ctypes.CDLL(sys.argv[1])
    lib.retra_open.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
    lib.retra_close.argtypes = [ctypes.c_void_p]
    lib.retra_awari_probe.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int),
                                      ctypes.POINTER(ctypes.c_int)]
    lib.retra_last_error.restype = ctypes.c_char_p
    lib.retra_status_name.restype = ctypes.c_char_p

    def check(status: int, what: str) -> None:
        if status != 0:
            name = lib.retra_status_name(status).decode()
            raise RuntimeError(f"{what}: {name}: {lib.retra_last_error().decode()}")

    db = ctypes.c_void_p()
    check(lib.retra_open(sys.argv[2].encode(), 16 << 20, ctypes.byref(db)), "retra_open")
    pits = [1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0] if len(sys.argv) == 3 else [int(a) for a in sys.argv[3:]]
    value = ctypes.c_int()
    try:
        check(lib.retra_awari_probe(db, (ctypes.c_int * 12)(*pits), ctypes.byref(value)),
              "retra_awari_probe")
        print(f"value {value.value}")
        bad = (ctypes.c_int * 12)(*([49] + [0] * 11))
        status = lib.retra_awari_probe(db, bad, ctypes.byref(value))
        print(f"49 stones: {lib.retra_status_name(status).decode()}")
        if status != 1:
            return 1
    finally:
        lib.retra_close(db)
    return 0


if __name__ == "__main__":
    sys.exit(main())
