(function(){
  "use strict";
  var list = document.getElementById("races");
  if (!list) { return; }
  var races = Array.prototype.slice.call(list.querySelectorAll("details.race"));
  var controls = document.createElement("div");
  controls.className = "controls";
  var keys = [["id", "race id"], ["variable", "variable"], ["class", "class"],
              ["detectors", "detector"], ["kind", "kind"]];
  var buttons = [];
  function sortBy(key, button){
    races.sort(function(a, b){
      var x = a.getAttribute("data-" + key), y = b.getAttribute("data-" + key);
      if (key === "id") { return Number(x) - Number(y); }
      return x < y ? -1 : x > y ? 1 : Number(a.getAttribute("data-id")) - Number(b.getAttribute("data-id"));
    });
    races.forEach(function(r){ list.appendChild(r); });
    buttons.forEach(function(b){ b.classList.toggle("on", b === button); });
    list.setAttribute("data-sorted", key);
  }
  var label = document.createElement("span");
  label.textContent = "Sort by:";
  controls.appendChild(label);
  keys.forEach(function(k){
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = k[1];
    b.addEventListener("click", function(){ sortBy(k[0], b); });
    buttons.push(b);
    controls.appendChild(b);
  });
  var filter = document.createElement("input");
  filter.type = "search";
  filter.placeholder = "Filter: variable, location, thread, detector";
  filter.addEventListener("input", function(){
    var q = filter.value.toLowerCase();
    races.forEach(function(r){
      r.classList.toggle("hidden", q !== "" && r.textContent.toLowerCase().indexOf(q) < 0);
    });
  });
  controls.appendChild(filter);
  var all = document.createElement("button");
  all.type = "button";
  all.textContent = "Expand all";
  all.addEventListener("click", function(){
    var open = all.textContent === "Expand all";
    races.forEach(function(r){ r.open = open; });
    all.textContent = open ? "Collapse all" : "Expand all";
  });
  controls.appendChild(all);
  list.parentNode.insertBefore(controls, list);
  sortBy("id", buttons[0]);
  window.addEventListener("beforeprint", function(){ races.forEach(function(r){ r.open = true; }); });
})();
