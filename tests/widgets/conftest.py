import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # tracekit: hand-built traces for the views
