// Draws each chart of the page with vega-embed (loaded just before this script, from the site itself) from the
// Vega-Lite spec that follows the chart's placeholder. Without JavaScript the placeholder shows a static SVG.

// Every mark shows its fields on hover. A tooltip needs a mark under the pointer, and a line is one mark for all its
// points: so every line (through nested charts) gets its points as invisible marks.
function withHoverTargets(spec) {
  if (Array.isArray(spec)) {
    spec.forEach(withHoverTargets);
  } else if (spec && typeof spec === "object") {
    const mark = spec.mark;
    if (mark === "line" || (mark?.type === "line" && !mark.point)) {
      spec.mark = { ...(typeof mark === "object" ? mark : { type: "line" }), point: { filled: true, opacity: 0, size: 60 } };
    }
    Object.values(spec).forEach(withHoverTargets);
  }
  return spec;
}

document.addEventListener("DOMContentLoaded", () => {
  for (const chart of document.querySelectorAll("div.vega-chart")) {
    const spec = withHoverTargets(JSON.parse(chart.nextElementSibling.textContent));
    spec.config = { ...spec.config, mark: { tooltip: true, ...spec.config?.mark } };
    vegaEmbed(chart, spec, { renderer: "svg", actions: false }).catch((error) => {
      chart.textContent = `This chart could not be drawn: ${error}`;
      console.error(error);
    });
  }
});
