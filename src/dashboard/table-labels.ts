/**
 * On a narrow screen the stylesheet turns each table row into a card and hides the table's head;
 * each cell then shows its column's name from `data-label`. This script copies the heading texts
 * onto the cells, again whenever the auto-refresh replaces the live part, so the table components
 * need not repeat every heading in every cell. Without scripts the cards simply have no labels.
 */
export const TABLE_LABELS_SCRIPT = `(() => {
  function label(root) {
    for (const table of root.querySelectorAll("table")) {
      const names = Array.from(table.querySelectorAll("thead th"), (th) => th.textContent.trim());
      for (const row of table.querySelectorAll("tbody tr")) {
        Array.from(row.children).forEach((cell, index) => {
          const name = names[index];
          if (name && !cell.hasAttribute("data-label")) cell.setAttribute("data-label", name);
        });
      }
    }
  }
  label(document);
  const live = document.getElementById("live");
  if (live) new MutationObserver(() => label(live)).observe(live, { childList: true });
})();`;
