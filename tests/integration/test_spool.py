"""The consumer's spool (user/event/spool.c): when records come faster than
they are typed and written, the consumer copies them from the ring buffer
into the spool and types them from there, in order.  Whether that happens
depends on the machine's speed; CMON_SPOOL=always sends every record
through the spool from the first, and each test here runs a test of the
event path so: the exact values and order it asserts must hold the same.
(The loss figures at a flat-out loop are `make bench`'s: a test asserts
values, not speed.)"""
import os

import test_capture
import test_lines
import test_staging
import test_typed


def _spooled(test):
    os.environ["CMON_SPOOL"] = "always"
    try:
        test()
    finally:
        del os.environ["CMON_SPOOL"]


def test_spooled_records_in_call_order():
    _spooled(test_staging.test_staged_records_in_call_order)


def test_spooled_calls_keep_their_captures():
    _spooled(test_staging.test_staged_calls_keep_their_captures)


def test_spooled_capture_roundtrip():
    _spooled(test_capture.test_capture_roundtrip)


def test_spooled_store_keeps_truncated_and_unreadable():
    _spooled(test_capture.test_store_keeps_truncated_and_unreadable)


def test_spooled_typed_csv():
    _spooled(test_typed.test_typed_csv)


def test_spooled_typed_json():
    _spooled(test_typed.test_typed_json_O2)


def test_spooled_lines_of_a_function():
    _spooled(test_lines.test_lines_of_a_function_time_and_memory)
