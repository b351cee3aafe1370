package skipped
