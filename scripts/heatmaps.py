#!/usr/bin/python3
"""Draw the arrays of `wafersim run CONFIG --heatmaps DIR` (or `wafersim map
CONFIG --heatmaps DIR`): one PNG per quantity per wafer, with the regions
outlined and labelled and a colour bar in the quantity's unit.

    heatmaps.py DIR [--out OUTDIR] [--only QUANTITY ...] [--width INCHES] [--dpi DPI]

DIR holds heatmaps.json (the grid, the regions and the arrays) and the .npy
files it names. Pictures go to OUTDIR (default DIR), named like the arrays
(wafer0_compute_busy_fraction.png); the path of every file written is printed.
x runs to the right and y downwards, as tile (x, y) on the mesh. A grid with
more tiles than the picture has pixels is drawn in blocks of n x n tiles, each
showing its largest value (--pool max, the default: one hot root tile or one
busy row of links stays visible) or their mean (--pool mean); the title says
n. The .npy files keep every tile's exact value. On a repaired wafer
(hardware.defects) the physical grid's categories (heatmaps.json's
physical_grid) are drawn too, one colour per category with a legend.
"""
import argparse
import json
import os
import sys

import numpy as np

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import BoundaryNorm, ListedColormap, LogNorm
    from matplotlib.patches import Patch, Rectangle
except ImportError:
    print("heatmaps.py: needs matplotlib (Debian: python3-matplotlib; scripts/setup.sh installs it)",
          file=sys.stderr)
    sys.exit(1)

# Units as the colour bars show them: bytes in KB keep the numbers short.
SCALES = {"bytes": (1e-3, "KB"), "J": (1e6, "µJ")}


def load_index(folder):
    path = os.path.join(folder, "heatmaps.json")
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError) as error:
        sys.exit(f"heatmaps.py: cannot read {path}: {error}")


def region_colours(count):
    """A qualitative map for region ids; -1 (no region) is drawn white."""
    base = plt.get_cmap("tab20").colors
    return ListedColormap([(1, 1, 1)] + [base[i % len(base)] for i in range(max(count, 1))])


def pooled(values, factor, how):
    """values in blocks of factor x factor tiles (the edges padded), each block's max, mean or min."""
    if factor <= 1:
        return values
    height, width = values.shape
    rows, cols = -(-height // factor), -(-width // factor)
    padded = np.full((rows * factor, cols * factor), np.nan)
    padded[:height, :width] = values
    blocks = padded.reshape(rows, factor, cols, factor)
    return {"max": np.nanmax, "mean": np.nanmean, "min": np.nanmin}[how](blocks, axis=(1, 3))


def blocks_and_extent(values, width_inches, dpi):
    """Tiles per pixel side, and the image's extent: the grid in tile coordinates whatever its pixels,
    so outlines and labels stay in tiles."""
    height, width = values.shape
    factor = max(1, int(np.ceil(width / (width_inches * dpi))))
    return factor, (-0.5, factor * -(-width // factor) - 0.5, factor * -(-height // factor) - 0.5, -0.5)


def finish(figure, axes, title, values, axis_prefix, out_path, dpi):
    """Title, the grid's limits (x right, y down, as on the mesh), axis labels; saves and closes."""
    height, width = values.shape
    axes.set_title(title, fontsize=9)
    axes.set_xlim(-0.5, width - 0.5)
    axes.set_ylim(height - 0.5, -0.5)
    axes.set_xlabel(f"{axis_prefix}x (tiles)")
    axes.set_ylabel(f"{axis_prefix}y (tiles)")
    figure.savefig(out_path, dpi=dpi, bbox_inches="tight")
    plt.close(figure)


def draw_categories(index, array_info, wafer, values, out_path, width_inches, dpi):
    """A categorical grid (the physical grid of a repaired wafer): one colour per category, a block of
    tiles drawn as one pixel shows its rarest category on the grid, so a lone dead tile stays visible."""
    names = array_info["categories"]
    height, width = values.shape
    factor, extent = blocks_and_extent(values, width_inches, dpi)
    counts = np.bincount(values.ravel(), minlength=len(names))
    # Rank 0 for the rarest category; a block takes the smallest rank among its tiles.
    rank_of = np.argsort(np.argsort(counts, kind="stable"), kind="stable")
    by_rank = np.argsort(rank_of)
    shown = by_rank[pooled(rank_of[values].astype(np.float64), factor, "min").astype(np.int64)]
    colours = ListedColormap([plt.get_cmap("tab10").colors[i % 10] for i in range(len(names))])
    norm = BoundaryNorm(np.arange(-0.5, len(names)), len(names))
    figure, axes = plt.subplots(figsize=(width_inches + 2.5, max(2.5, width_inches * height / width + 1.0)))
    axes.imshow(shown, cmap=colours, norm=norm, interpolation="nearest", extent=extent)
    axes.legend(handles=[Patch(color=colours(i), label=f"{name} ({counts[i]})") for i, name in enumerate(names)],
                loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=7, frameon=False)
    blocks = f", rarest of {factor} x {factor} tiles per pixel" if factor > 1 else ""
    finish(figure, axes,
           f"{index['model']} on {index['hardware']}, wafer {wafer}\n{array_info['quantity']} (physical grid{blocks})",
           values, "physical ", out_path, dpi)


def draw(index, array_info, wafer, values, out_path, width_inches, dpi, pool):
    quantity, unit = array_info["quantity"], array_info["unit"]
    height, width = values.shape
    factor, extent = blocks_and_extent(values, width_inches, dpi)
    figure_height = max(2.5, width_inches * height / width + 1.0)
    figure, axes = plt.subplots(figsize=(width_inches + 1.5, figure_height))
    regions = [r for r in index["regions"] if r["wafer"] == wafer]
    if quantity == "region_id":
        count = len(index["regions"])
        norm = BoundaryNorm(np.arange(-1.5, count), count + 1)  # one colour per id, -1 included
        image = axes.imshow(values[::factor, ::factor], cmap=region_colours(count), norm=norm,
                            interpolation="nearest", extent=extent)
        label = "region id (white, -1: no region)"
    else:
        scale, shown_unit = SCALES.get(unit, (1.0, unit))
        shown = pooled(values * scale, factor, pool)
        colours = plt.get_cmap("viridis").copy()
        norm, scale_text = None, ""
        if quantity.startswith("link_") and shown.max() > 0:
            # Link traffic spans orders of magnitude (a root's row against the rest): a log scale
            # over four decades below the peak; idle links get the bottom colour.
            norm, scale_text = LogNorm(vmin=shown.max() * 1e-4, vmax=shown.max(), clip=True), ", log scale"
            colours.set_bad(colours(0.0))
        image = axes.imshow(shown, cmap=colours, norm=norm, interpolation="nearest", extent=extent)
        label = f"{quantity} ({shown_unit}{scale_text})"
    colour_bar = figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
    if quantity == "region_id":
        colour_bar.set_ticks(range(-1, len(index["regions"]), max(1, len(index["regions"]) // 10)))
    colour_bar.set_label(label)
    for region in regions:
        axes.add_patch(Rectangle((region["x"] - 0.5, region["y"] - 0.5), region["width_tiles"],
                                 region["height_tiles"], fill=False, edgecolor="white", linewidth=0.6))
        short = region["name"].replace("layer ", "L")
        axes.text(region["x"] + region["width_tiles"] / 2, region["y"] + region["height_tiles"] / 2, short,
                  ha="center", va="center", fontsize=6, color="white",
                  bbox={"facecolor": "black", "alpha": 0.35, "pad": 0.5, "linewidth": 0})
    measured = quantity.startswith(("compute_", "link_"))  # the rest is the plan's, also in a run's folder
    source = "simulated decode" if measured else "plan"
    blocks = f", {pool} of {factor} x {factor} tiles per pixel" if factor > 1 and quantity != "region_id" else ""
    finish(figure, axes, f"{index['model']} on {index['hardware']}, wafer {wafer}\n{quantity} ({source}{blocks})",
           values, "", out_path, dpi)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", help="the --heatmaps folder")
    parser.add_argument("--out", help="folder for the pictures (default: the --heatmaps folder)")
    parser.add_argument("--only", nargs="+", metavar="QUANTITY", help="draw only these quantities")
    parser.add_argument("--width", type=float, default=6.0, help="width of the grid in the picture, inches")
    parser.add_argument("--dpi", type=int, default=100)
    parser.add_argument("--pool", choices=("max", "mean"), default="max",
                        help="how a block of tiles drawn as one pixel is summarised")
    args = parser.parse_args()
    index = load_index(args.folder)
    out = args.out or args.folder
    os.makedirs(out, exist_ok=True)
    # The logical grid's arrays, and a repaired wafer's physical grid of its own shape.
    grids = [(index, index["arrays"])]
    if "physical_grid" in index:
        grids.append((index["physical_grid"], index["physical_grid"]["arrays"]))
    known = {array["quantity"] for _, arrays in grids for array in arrays}
    for quantity in args.only or []:
        if quantity not in known:
            sys.exit(f"heatmaps.py: no array {quantity!r} in {args.folder} (has: {', '.join(sorted(known))})")
    for grid, arrays in grids:
        for array in arrays:
            if args.only and array["quantity"] not in args.only:
                continue
            for wafer, name in enumerate(array["files"]):
                values = np.load(os.path.join(args.folder, name))
                expected = (grid["height_tiles"], grid["width_tiles"])
                if values.shape != expected:
                    sys.exit(f"heatmaps.py: {name} has shape {values.shape}, heatmaps.json says {expected}")
                out_path = os.path.join(out, os.path.splitext(name)[0] + ".png")
                # Written under a temporary name first, so a picture is never left half drawn.
                temporary = out_path + ".tmp.png"
                if "categories" in array:
                    draw_categories(index, array, wafer, values, temporary, args.width, args.dpi)
                else:
                    draw(index, array, wafer,
                         values.astype(np.float64) if array["quantity"] != "region_id" else values,
                         temporary, args.width, args.dpi, args.pool)
                os.replace(temporary, out_path)
                print(out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
