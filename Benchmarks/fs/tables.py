"""Markdown tables and medians for the benchmark reports (what bench.sh prints is pasted into the README)."""
import statistics


def median(values):
    return statistics.median(values) if values else float("nan")


def print_table(headers, rows):
    """Prints a Markdown table, columns padded to their widest cell."""
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[k]) for row in cells) for k in range(len(headers))]
    line = lambda row: "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"
    print(line(cells[0]))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells[1:]:
        print(line(row))


def seconds(s):
    return f"{s:.3f} s" if s < 10 else f"{s:.1f} s"
