"""Reports of finished runs: tables, charts, the HTML page, merged runs."""
