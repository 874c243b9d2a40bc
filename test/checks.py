"""The checklist of a scripted test: one `ok:`/`FAIL:` line per check, then
PASS or the number of failed checks, and the exit status."""


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, ok, what, detail=""):
        print(("ok:   " if ok else "FAIL: ") + what)
        if not ok:
            if detail:
                print(detail)
            self.failures.append(what)

    def result(self):
        """Prints the verdict; 0 when every check passed, else 1."""
        print("PASS" if not self.failures else f"{len(self.failures)} check(s) failed")
        return 1 if self.failures else 0
