// HalluStudio keyboard shortcuts for the Annotate tab:
//   1-5 rate · j next · k previous · u undo · b back to the item an undo took something back from
// They never fire while the user types in a field, and only while the Annotate
// tab is visible; each one clicks the button with that elem_id, so a shortcut
// does exactly what the button does (one library call, one event).
(function () {
  const KEYS = { "1": "rate-1", "2": "rate-2", "3": "rate-3", "4": "rate-4", "5": "rate-5",
                 "j": "ann-next", "k": "ann-prev", "u": "ann-undo", "b": "ann-undo-back" };

  function isTyping(target) {
    if (!target) return false;
    const tag = (target.tagName || "").toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || target.isContentEditable;
  }

  function visibleButton(id) {
    const host = document.getElementById(id);
    if (!host) return null;
    const button = host.tagName === "BUTTON" ? host : host.querySelector("button");
    const el = button || host;
    return el.offsetParent !== null ? el : null;  // hidden tab: offsetParent is null
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (isTyping(event.target)) return;
    const id = KEYS[event.key];
    if (!id) return;
    const button = visibleButton(id);
    if (!button) return;
    event.preventDefault();
    button.click();
  });
})();
