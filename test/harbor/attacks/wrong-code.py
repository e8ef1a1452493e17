# Shared by the attacks: fastmath/core.py made fast and wrong (fib and is_prime fail their tests; a
# benchmark's return value changes). Imported by the attack scripts with exec(open(...).read()).
WRONG_CORE = '''"""Number helpers, written plainly."""


def fib(n):
    return 2 * n


def is_prime(n):
    return n > 1


def sum_of_squares(n):
    return n * (n + 1) * (2 * n + 1) // 6 + n


def count_primes(limit):
    candidates = list(range(2, limit))
    return len([k for k in candidates if all(k % d for d in range(2, k))])
'''
