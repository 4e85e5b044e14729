"""The baseline for the jupyter backend in `npm run bench`: a local ipykernel driven directly with jupyter_client
(ZeroMQ, no Jupyter Server, no support cell). Each line on stdin asks for one execution of that line's code
(JSON string); each reply line is the JSON of the stdout it printed, once the kernel is idle again.
The bench times the round trip from its side, as it times ours."""
import json
import sys

from jupyter_client.manager import start_new_kernel


def main():
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        for line in sys.stdin:
            code = json.loads(line)
            printed = []

            def hook(message):
                if message["msg_type"] == "stream" and message["content"]["name"] == "stdout":
                    printed.append(message["content"]["text"])

            reply = client.execute_interactive(code, output_hook=hook, timeout=60)
            if reply["content"]["status"] != "ok":
                raise RuntimeError(f"the kernel failed: {reply['content']}")
            sys.stdout.write(json.dumps("".join(printed)) + "\n")
            sys.stdout.flush()
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
