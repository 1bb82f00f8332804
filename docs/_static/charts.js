// Draws each chart of the page with vega-embed (loaded just before this script, from the site itself) from the
// Vega-Lite spec that follows the chart's placeholder. Without JavaScript the placeholder shows a static SVG.
document.addEventListener("DOMContentLoaded", () => {
  for (const chart of document.querySelectorAll("div.vega-chart")) {
    const spec = JSON.parse(chart.nextElementSibling.textContent);
    vegaEmbed(chart, spec, { renderer: "svg", actions: false }).catch((error) => {
      chart.textContent = `This chart could not be drawn: ${error}`;
      console.error(error);
    });
  }
});
