"""The settings of the SparkSession cepagg starts."""

from __future__ import annotations

JAVA = "spark.driver.extraJavaOptions"


def test_the_driver_threads_get_a_deep_stack_whatever_java_options_the_user_gives():
    from cepagg.spark.session import THREAD_STACK, session_settings

    assert session_settings(None, 2)[JAVA].split() == [THREAD_STACK, "-XX:+UseSerialGC"]
    own = session_settings({JAVA: "-XX:+UseG1GC -Dapp=1"}, 2)[JAVA].split()
    assert own == [THREAD_STACK, "-XX:+UseG1GC", "-Dapp=1"]  # (the user's replace cepagg's garbage collector)
    assert session_settings({JAVA: "-Xss4m"}, 2)[JAVA].split()[-1] == "-Xss4m"  # (the last -Xss counts)

