"""The crossover figure of ``python -m cranax.bench``: steady-state time against input size per system (selu,
matmul), the size from which cranax overtakes NumPy marked, and the seed examples / MLP step as bars."""
import math

__all__ = ["plot"]

_STYLE = {"cranax": dict(color="#d62728", marker="o"), "numpy": dict(color="#1f77b4", marker="s"),
          "jax": dict(color="#2ca02c", marker="^")}


def _size_label(s):
    e = round(math.log10(s)) if s else 0
    return f"1e{e}" if s and 10 ** e == s else f"{s:g}"


def plot(reports, cross, path, title_machine="", systems_info=None):
    """Writes the figure to ``path`` (PNG). Wrong or failed results are drawn as crosses and left out of the
    lines."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = []
    for r in reports:
        if r.system not in systems:
            systems.append(r.system)
    fig, axes = plt.subplots(1, 3, figsize=(18, 5.6), gridspec_kw={"width_ratios": [1, 1, 1.15]})
    for ax, group, xlabel in ((axes[0], "selu", "elements"), (axes[1], "matmul", "elements per operand (n×n, n = √size)")):
        for s in systems:
            rs = sorted((r for r in reports if r.extra.get("group") == group and r.system == s), key=lambda r: r.size)
            ok = [r for r in rs if r.ranked and r.steady_median_s]
            bad = [r for r in rs if not r.ranked]
            if ok:
                ax.plot([r.size for r in ok], [r.steady_median_s for r in ok], label=s, **_STYLE.get(s, {}))
                # the spread of the timed calls (fastest to slowest): wide bands are noisy figures
                ax.fill_between([r.size for r in ok], [r.steady_min_s or r.steady_median_s for r in ok],
                                [r.steady_max_s or r.steady_median_s for r in ok],
                                color=_STYLE.get(s, {}).get("color"), alpha=0.10, linewidth=0)
            for r in bad:
                y = r.steady_median_s or (ok[-1].steady_median_s if ok else 1e-3)
                ax.plot([r.size], [y], "x", color="black", markersize=10)
                ax.annotate("WRONG" if r.correct is False else "FAILED", (r.size, y), fontsize=7)
        c = cross.get(f"{group}:cranax<numpy")
        if c and c["sizes"]:
            if c["from_size"] is not None:
                ax.axvline(c["from_size"], color="gray", linestyle=":")
                txt = ("cranax faster than NumPy\nat every size" if c["always"]
                       else f"cranax overtakes NumPy\nfrom {_size_label(c['from_size'])}")
                ax.text(c["from_size"], 0.9, txt, transform=ax.get_xaxis_transform(),
                        fontsize=8, ha="left", va="center", color="dimgray")
            else:
                ax.text(0.02, 0.95, "cranax not ahead of NumPy\nat the largest size measured", transform=ax.transAxes,
                        fontsize=8, va="top", color="dimgray")
        if ax.has_data():
            ax.set_xscale("log")
            ax.set_yscale("log")
        else:
            ax.text(0.5, 0.5, "not measured", transform=ax.transAxes, ha="center")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("steady-state time per call (s): median, band min–max")
        ax.set_title(f"{group}: time vs input size")
        ax.grid(True, which="both", alpha=0.25)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()

    # the seed examples and the MLP step: grouped bars (log scale)
    ax = axes[2]
    names = []
    for r in reports:
        if r.extra.get("group") in ("seed", "mlp") and r.name not in names:
            names.append(r.name)
    width = 0.8 / max(1, len(systems))
    for j, s in enumerate(systems):
        ys, xs = [], []
        for i, n in enumerate(names):
            rr = [r for r in reports if r.name == n and r.system == s]
            if rr and rr[0].ranked and rr[0].steady_median_s:
                xs.append(i + (j - (len(systems) - 1) / 2) * width)
                ys.append(rr[0].steady_median_s)
        ax.barh(xs, ys, height=width, label=s, color=_STYLE.get(s, {}).get("color"))
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels([n.replace("seed: ", "") for n in names], fontsize=8)
    ax.invert_yaxis()
    if names:
        ax.set_xscale("log")
    else:
        ax.text(0.5, 0.5, "not measured", transform=ax.transAxes, ha="center")
    ax.set_xlabel("steady-state time per call (s, median; shorter is faster)")
    ax.set_title("seed examples and MLP training step")
    ax.grid(True, axis="x", which="both", alpha=0.25)
    if names:
        ax.legend(fontsize=8)

    sub = ""
    if systems_info:
        sub = " · ".join(f"{k} {v.get('version', '')} ({v.get('backend', '')})" for k, v in systems_info.items())
    fig.suptitle(f"cranax.bench — {title_machine}\n{sub}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
