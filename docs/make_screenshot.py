"""Generate docs/screenshot.svg: the app on first start, through Textual's run_test.

Real parts: a fresh ADVISOR_HOME created from the shipped seed prices, a real probe of the
default workload on this machine (about 20 s of TensorFlow), then the app as a user first sees it.

    /path/to/python docs/make_screenshot.py [--size 100x32]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


async def shoot(target: Path, size: tuple[int, int]) -> None:
    from advisor.tui.app import make_app
    from advisor.tui.results import ResultsTable

    app = make_app()
    async with app.run_test(size=size) as pilot:
        for _ in range(600):  # the stored probe is found at once; give the ranking time
            if app.query_one(ResultsTable).row_count:
                break
            await pilot.pause(0.1)
        await pilot.pause(0.5)
        app.save_screenshot(str(target))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100x32")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.svg")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.split("x"))
    with tempfile.TemporaryDirectory() as home:
        os.environ["ADVISOR_HOME"] = home
        from advisor import service
        from advisor.tui.form import FormState

        request = service.Request(FormState().model)
        print("probing the default workload on this machine...", file=sys.stderr)
        service.probe_and_store(request)
        asyncio.run(shoot(args.out, (width, height)))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
