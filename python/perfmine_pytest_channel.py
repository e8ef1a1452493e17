"""perfmine's pytest plugin for the verifier (`-p perfmine_pytest_channel`): the test run driven
over the verifier's channel (perfmine_channel.py), one test at a time, each outcome answered as
it happens, instead of a report file written at the end.

    hello                        when pytest is configured (before the code under test is imported)
    collected {items, errors}    after collection: every test's node id, in order; collection errors
    <- {"op": "run", "i": N}     runs test N (setup, call, teardown; the next test named for fixtures)
    result {i, nodeid, outcome}  passed, failed, error (setup or teardown), or skipped
    <- {"op": "end"}             no more tests
    end                          the loop is over
    finished {exitstatus}        pytest's exit status, at the session's end

The verifier compares every outcome with the base's and the exit status with the outcomes; a
line out of turn, a second answer, or a process that ends before `finished` is a failed check.

Python 3.8+; pytest.
"""

import pytest

from perfmine_channel import open_channel

STATE = {"request": None, "answer": None, "outcomes": {}, "errors": 0}


def pytest_configure(config):
    request, answer = open_channel()
    STATE["request"], STATE["answer"] = request, answer
    answer({"kind": "hello"})


def pytest_collectreport(report):
    if report.failed:
        STATE["errors"] += 1


def pytest_collection_finish(session):
    STATE["answer"]({"kind": "collected", "items": [item.nodeid for item in session.items], "errors": STATE["errors"]})


def pytest_runtest_logreport(report):
    seen = STATE["outcomes"].get(report.nodeid)
    if report.failed:
        outcome = "failed" if report.when == "call" else "error"
    elif report.skipped:
        outcome = "skipped"
    else:
        outcome = "passed"
    if seen in ("failed", "error") or (seen == "skipped" and outcome == "passed"):
        return
    STATE["outcomes"][report.nodeid] = outcome


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    items = session.items
    while True:
        request = STATE["request"]()
        if request is None or request.get("op") == "end":
            break
        i = request["i"]
        item = items[i]
        following = items[i + 1] if i + 1 < len(items) else None
        STATE["outcomes"].pop(item.nodeid, None)
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)
        outcome = STATE["outcomes"].get(item.nodeid, "error")
        STATE["answer"]({"kind": "result", "i": i, "nodeid": item.nodeid, "outcome": outcome})
        if session.shouldstop or session.shouldfail:
            break
    STATE["answer"]({"kind": "end"})
    return True


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    answer = STATE["answer"]
    if answer is not None:
        answer({"kind": "finished", "exitstatus": int(exitstatus)})
