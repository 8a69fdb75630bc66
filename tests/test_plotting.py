"""The book's plotting style: palette, line styles and colormap."""

import matplotlib
import matplotlib.colors as mcolors
import pytest

from posenc.plotting import COLORMAP, LINE_STYLES, OKABE_ITO, use_book_style

matplotlib.use("Agg")


def _luminance(hex_color):
    # relative luminance of an sRGB colour (WCAG 2)
    def channel(c):
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in mcolors.to_rgb(hex_color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_the_palette_is_okabe_ito_and_each_colour_has_its_own_line_style():
    assert {c.lower() for c in OKABE_ITO} == {
        "#000000", "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7",
    }  # fmt: skip
    assert len(LINE_STYLES) == len(OKABE_ITO) and len(set(map(str, LINE_STYLES))) == len(LINE_STYLES)


def test_the_weakest_colour_on_white_comes_last():
    # contrast against white: (1.05) / (L + 0.05); yellow is the lowest, so it is used last
    contrast = [1.05 / (_luminance(c) + 0.05) for c in OKABE_ITO]
    assert min(contrast) == pytest.approx(contrast[-1])


def test_use_book_style_sets_the_cycle_and_colormap():
    import matplotlib.pyplot as plt

    with matplotlib.rc_context():
        use_book_style()
        cycle = list(matplotlib.rcParams["axes.prop_cycle"])
        assert [c["color"] for c in cycle] == list(OKABE_ITO)
        assert [c["linestyle"] for c in cycle] == list(LINE_STYLES)
        assert matplotlib.rcParams["image.cmap"] == COLORMAP
        fig, ax = plt.subplots()
        (first,) = ax.plot([0, 1])
        (second,) = ax.plot([1, 0])
        assert mcolors.to_hex(first.get_color()) != mcolors.to_hex(second.get_color())
        assert first.get_linestyle() != second.get_linestyle()
        plt.close(fig)
