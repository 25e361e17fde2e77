import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_collection_modifyitems(session, config, items):
    """Browser tests last: Playwright's sync API keeps an event loop running in the main
    thread for the rest of the session, which other tests' ``asyncio.run`` cannot share."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
