"""`python -m screenpilot`: run the screenpilot executable this wheel installed."""

import os
import sys
import sysconfig


def find_binary() -> str:
    name = "screenpilot"
    candidates = [os.path.join(sysconfig.get_path("scripts"), name)]
    user = sysconfig.get_path("scripts", f"{os.name}_user") if os.name == "posix" else None
    if user:
        candidates.append(os.path.join(user, name))
    candidates.append(os.path.join(os.path.dirname(sys.executable), name))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(f"the screenpilot executable is not in any of {candidates}")


def main() -> None:
    binary = find_binary()
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
