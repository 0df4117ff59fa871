# moto's S3 server (PyPI moto[server]) for anes's tests, handling one request at a time.
#
# S3 makes a conditional PUT (If-Match, If-None-Match: *) one step with its write; moto checks the
# condition and then writes, on the threads of a threaded server, so two writers holding the same ETag
# can both be told 200 and one update is lost (16 threads of read-and-conditional-PUT on one object
# lost 1 of 321 updates). The fencing of anes's S3 store rests on that step being atomic, so the tests
# run moto behind one lock. Each request's body is read before the lock is taken: a client that sends
# slowly, or a connection a test cuts, holds up nobody.
#
# python3 -c "$(cat moto_serialized.py)" HOST PORT
import io
import os
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

host, port = sys.argv[1], int(sys.argv[2])
os.environ.setdefault("MOTO_PORT", str(port))
moto = DomainDispatcherApplication(create_backend_app)
one_at_a_time = threading.Lock()


def serialized(environ, start_response):
    stream = environ["wsgi.input"]
    length = environ.get("CONTENT_LENGTH")
    if length:
        body = stream.read(int(length))
    elif environ.get("wsgi.input_terminated"):
        body = stream.read()
    else:
        body = b""
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    with one_at_a_time:
        answer = moto(environ, start_response)
        try:
            return [b"".join(answer)]
        finally:
            close = getattr(answer, "close", None)
            if close is not None:
                close()


run_simple(host, port, serialized, threaded=True)
