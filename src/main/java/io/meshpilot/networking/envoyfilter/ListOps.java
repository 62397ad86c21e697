package io.meshpilot.networking.envoyfilter;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** istiod's insertBeforeFunc, insertAfterFunc and replaceFunc: at the first element that matches. */
final class ListOps {
    private ListOps() {
    }

    static <E> boolean insertBefore(List<E> list, Predicate<E> at, E value) {
        for (int i = 0; i < list.size(); i++) {
            if (at.test(list.get(i))) {
                list.add(i, value);
                return true;
            }
        }
        return false;
    }

    static <E> boolean insertAfter(List<E> list, Predicate<E> at, E value) {
        for (int i = 0; i < list.size(); i++) {
            if (at.test(list.get(i))) {
                list.add(i + 1, value);
                return true;
            }
        }
        return false;
    }

    static <E> boolean replace(List<E> list, Predicate<E> at, E value) {
        for (int i = 0; i < list.size(); i++) {
            if (at.test(list.get(i))) {
                list.set(i, value);
                return true;
            }
        }
        return false;
    }

    static <E> List<E> mutable(List<E> list) {
        return new ArrayList<>(list);
    }
}
